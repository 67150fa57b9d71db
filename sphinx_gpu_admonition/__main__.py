"""``python -m sphinx_gpu_admonition``: the ``sphinx-gpu-admonition`` command line."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
