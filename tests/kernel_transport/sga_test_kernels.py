"""The kernels the test suite starts talk to their clients over Unix sockets (ipc).

jupyter_client gives a kernel its TCP ports by binding port 0, closing the socket
and writing the number into the connection file; the kernel binds it a second or
two later.  On a busy machine another process can take the port in between: the
kernel dies with "Address already in use" and its client reports "Kernel died
before replying to kernel_info" (a whole module's fixture failed so).  An ipc
kernel has no port to lose: its sockets are files in a folder of its own.

MyST-NB and nbclient create their ``KernelManager`` without a Jupyter config (no
config file reaches them), but every kernel manager asks jupyter_client's
``KernelProvisionerFactory`` for a provisioner, by default the one that
``JUPYTER_DEFAULT_PROVISIONER_NAME`` names.  ``tests/conftest.py`` sets that
variable to :class:`IPCProvisioner` and puts this folder (with the entry point
that registers it, ``sga_test_kernels-0.dist-info``) on ``PYTHONPATH``, for the
test process and every process it starts: in-process Sphinx builds, sphinx-build
and jupyter-book subprocesses, and mystmd's Jupyter server.  Users' builds are
untouched.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

#: a Unix socket's path has at most 107 bytes (``sockaddr_un``)
_LONGEST_SOCKET = 100


class IPCProvisioner(LocalProvisioner):  # type: ignore[misc]
    """The local provisioner, with the kernel on the ipc transport: sockets named
    ``<temporary folder>/sga-kernel-<kernel id>-<n>``, unique to the kernel (two
    kernels on one path would take each other's socket)."""

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        manager = self.parent
        if manager is not None and manager.transport == "tcp":
            manager.transport = "ipc"
            manager.ip = socket_prefix(self.kernel_id)
        return await super().pre_launch(**kwargs)


def socket_prefix(kernel_id: str) -> str:
    folder = tempfile.gettempdir()
    prefix = os.path.join(folder, f"sga-kernel-{kernel_id}")
    if len(prefix) + 4 > _LONGEST_SOCKET:  # "-<n>" follows
        prefix = os.path.join("/tmp", f"sga-kernel-{kernel_id}")
    return prefix
