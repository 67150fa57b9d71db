# sphinx-gpu-admonition on mystmd: IPython runs this file (PYTHONSTARTUP) in every
# kernel that `myst build --execute` starts. mystmd gives all kernels one
# environment, so this names the page's own capture file (from JPY_SESSION_NAME,
# the page's path) and then runs the probe's startup file, which does the rest
# (and chains the user's own PYTHONSTARTUP). Like that file it must leave no names
# behind and never raise. The names repeat mystmd/capture.py (ENV_CAPTURE,
# KERNELS_FOLDER, page_file_name) and probe/__init__.py: this file imports nothing
# of the package, so that a broken install cannot break a kernel.
def _sphinx_gpu_admonition_mystmd_start():
    import hashlib
    import json
    import os
    import sys

    environ = os.environ
    # popped: kernels the notebook starts itself must not write into its record
    base = environ.pop("SPHINX_GPU_ADMONITION_MYSTMD_CAPTURE", None)
    page = environ.get("JPY_SESSION_NAME")
    here = os.path.dirname(os.path.abspath(__file__))
    probe_folder = os.path.join(os.path.dirname(here), "probe")
    if not base or not page:
        return None
    folder = os.path.join(base, "kernels")
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(os.path.abspath(page).encode("utf-8")).hexdigest()[:16] + ".jsonl"
    output = os.path.join(folder, name)
    # one kernel per page and build: an earlier build's lines must not be read as this one's
    with open(output, "w", encoding="utf-8") as stream:
        # the kernel's Python: the build lists its environment's packages (:packages:)
        stream.write(json.dumps({"kind": "mystmd_page", "page": os.path.abspath(page),
                                 "pid": os.getpid(), "executable": sys.executable}) + "\n")
    environ["SPHINX_GPU_ADMONITION_OUTPUT"] = output
    environ["SPHINX_GPU_ADMONITION_PROBE"] = os.path.join(probe_folder, "kernel_probe.py")
    return os.path.join(probe_folder, "startup.py")


try:
    _sphinx_gpu_admonition_mystmd_probe_startup = _sphinx_gpu_admonition_mystmd_start()
    if _sphinx_gpu_admonition_mystmd_probe_startup:
        with open(_sphinx_gpu_admonition_mystmd_probe_startup, encoding="utf-8") as \
                _sphinx_gpu_admonition_mystmd_stream:
            # in the notebook's namespace, as IPython would run it (it cleans up after itself)
            exec(compile(_sphinx_gpu_admonition_mystmd_stream.read(),
                         _sphinx_gpu_admonition_mystmd_probe_startup, "exec"))
except Exception:  # noqa: S110 - never break the kernel
    pass
finally:
    del _sphinx_gpu_admonition_mystmd_start
    globals().pop("_sphinx_gpu_admonition_mystmd_probe_startup", None)
    globals().pop("_sphinx_gpu_admonition_mystmd_stream", None)
