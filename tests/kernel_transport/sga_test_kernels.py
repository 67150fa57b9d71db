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

The same provisioner shortens the wait for a kernel that does not exit when asked
to.  About one ipykernel 7.4 in ten hangs at its shutdown (its control thread
flushes a stream while the main thread joins it, measured here with a dump of
the hung kernel's threads); jupyter_client then waits half its
``shutdown_wait_time`` (5 s: 2.5 s) before it sends SIGTERM.  Users' builds pay
that too (``docs/performance.md``, "less kernel-shutdown waits"); the suite's
some 300 kernels need not: a healthy kernel exits in 0.1 to 0.6 s, so SIGTERM
after 1 s changes no test's kernel but the hung ones.  A hung kernel has run its
``atexit`` functions (where the probe writes its last line) before it hangs: they
run 4 to 11 ms after the shutdown request, with JAX or without (measured in ten
kernels each), and ipykernel's closing, where it hangs, is the first registered,
so the last run.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

#: a Unix socket's path has at most 107 bytes (``sockaddr_un``)
_LONGEST_SOCKET = 100
#: seconds before a kernel that did not exit when asked is stopped: half of it to
#: SIGTERM, half to SIGKILL (jupyter_client's default: 5)
SHUTDOWN_WAIT_SECONDS = 2.0


class IPCProvisioner(LocalProvisioner):  # type: ignore[misc]
    """The local provisioner, with the kernel on the ipc transport: sockets named
    ``<temporary folder>/sga-kernel-<kernel id>-<n>``, unique to the kernel (two
    kernels on one path would take each other's socket); a kernel hung at its
    shutdown is stopped after 1 s instead of 2.5 s."""

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        manager = self.parent
        if manager is not None and manager.transport == "tcp":
            manager.transport = "ipc"
            manager.ip = socket_prefix(self.kernel_id)
        return await super().pre_launch(**kwargs)

    def get_shutdown_wait_time(self, recommended: float = 5.0) -> float:
        """The provisioner's hook for the manager's ``shutdown_wait_time``."""
        return min(recommended, SHUTDOWN_WAIT_SECONDS)


def socket_prefix(kernel_id: str) -> str:
    folder = tempfile.gettempdir()
    prefix = os.path.join(folder, f"sga-kernel-{kernel_id}")
    if len(prefix) + 4 > _LONGEST_SOCKET:  # "-<n>" follows
        prefix = os.path.join("/tmp", f"sga-kernel-{kernel_id}")
    return prefix
