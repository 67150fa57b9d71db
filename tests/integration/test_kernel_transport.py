"""The suite's kernels cannot lose a TCP port race (tests/kernel_transport/): those
this process starts as MyST-NB does (nbclient, no Jupyter config) and those its
subprocesses start use the ipc transport, with sockets of their own."""

from __future__ import annotations

import subprocess
import sys

import nbformat
from conftest import KERNEL_PROVISIONER
from nbclient import NotebookClient
from sga_test_kernels import IPCProvisioner


def test_a_kernel_nbclient_starts_talks_over_unix_sockets(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    client = NotebookClient(notebook, timeout=120, resources={"metadata": {"path": tmp_path}})
    with client.setup_kernel():
        manager = client.km
        assert isinstance(manager.provisioner, IPCProvisioner)
        assert manager.transport == "ipc" and manager.ip.startswith("/")
        client.execute_cell(notebook.cells[0], 0)
    assert notebook.cells[0].outputs[0]["data"]["text/plain"] == "42"


def test_the_builds_and_servers_the_suite_starts_use_it_too():
    script = ("from jupyter_client.provisioning.factory import KernelProvisionerFactory as F\n"
              "factory = F.instance()\n"
              "print(factory.default_provisioner_name,"
              " factory.default_provisioner_name in factory.get_provisioner_entries())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.split() == [KERNEL_PROVISIONER, "True"]
