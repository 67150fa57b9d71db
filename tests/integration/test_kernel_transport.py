"""The suite's kernels cannot lose a TCP port race (tests/kernel_transport/): those
this process starts as MyST-NB does (nbclient, no Jupyter config) and those its
subprocesses start use the ipc transport, with sockets of their own; a kernel that
hangs at its shutdown is stopped sooner than jupyter_client's default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
        # the manager's 5 s (SIGTERM after 2.5 s), shortened by the provisioner
        wait = manager.provisioner.get_shutdown_wait_time(recommended=manager.shutdown_wait_time)
        assert 0 < wait < manager.shutdown_wait_time
    assert notebook.cells[0].outputs[0]["data"]["text/plain"] == "42"


def test_a_kernel_that_hangs_at_its_shutdown_is_stopped(tmp_path):
    """As an ipykernel 7.4 does about one time in ten (its control thread flushing a
    stream that its main thread is closing): the notebook's outputs are kept, the
    kernel process is gone."""
    hang = "import atexit, os, time\natexit.register(time.sleep, 60)\nos.getpid()"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(hang)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    client = NotebookClient(notebook, timeout=120, resources={"metadata": {"path": tmp_path}})
    client.execute()
    # the cell's output is kept: the kernel's process id, which is gone (killed and
    # reaped; nbclient drops its manager after the shutdown, so it is asked of the system)
    pid = int(notebook.cells[0].outputs[0]["data"]["text/plain"])
    assert not Path(f"/proc/{pid}").exists()


def test_the_builds_and_servers_the_suite_starts_use_it_too():
    script = ("from jupyter_client.provisioning.factory import KernelProvisionerFactory as F\n"
              "factory = F.instance()\n"
              "print(factory.default_provisioner_name,"
              " factory.default_provisioner_name in factory.get_provisioner_entries())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.split() == [KERNEL_PROVISIONER, "True"]
