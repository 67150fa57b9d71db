"""Files that run inside the Jupyter kernel (standard library only).

They are loaded by path, never imported as part of this package in the kernel,
so the kernel may use another Python environment than Sphinx.
"""

from pathlib import Path

STARTUP_FILE = Path(__file__).with_name("startup.py")
KERNEL_PROBE_FILE = Path(__file__).with_name("kernel_probe.py")

#: environment variables the Sphinx side sets for the kernel
ENV_OUTPUT = "SPHINX_GPU_ADMONITION_OUTPUT"
ENV_PROBE = "SPHINX_GPU_ADMONITION_PROBE"
ENV_USER_STARTUP = "SPHINX_GPU_ADMONITION_USER_STARTUP"
#: "1": capture JAX's explanations of recompilations (gpu_explain_recompilations)
ENV_EXPLAIN_RECOMPILATIONS = "SPHINX_GPU_ADMONITION_EXPLAIN_RECOMPILATIONS"
