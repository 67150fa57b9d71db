# sphinx-gpu-admonition: IPython runs this file (PYTHONSTARTUP) in the notebook's
# own namespace when the kernel starts. It loads the probe from its file and then
# runs the user's own PYTHONSTARTUP, if there was one. It must leave no names
# behind and never raise: the notebook has to run exactly as without it.
def _sphinx_gpu_admonition_start():
    import os
    import sys

    output = os.environ.get("SPHINX_GPU_ADMONITION_OUTPUT")
    probe_file = os.environ.get("SPHINX_GPU_ADMONITION_PROBE")
    if output and probe_file:
        try:
            import importlib.util

            name = "_sphinx_gpu_admonition_probe"
            spec = importlib.util.spec_from_file_location(name, probe_file)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            module.install(get_ipython(), output)  # noqa: F821 - IPython builtin
        except Exception as error:  # never break the kernel
            try:
                import json

                with open(output, "a", encoding="utf-8") as stream:
                    stream.write(json.dumps({"kind": "probe_error",
                                             "message": f"{type(error).__name__}: {error}"})
                                 + "\n")
            except Exception:
                pass
    return os.environ.get("SPHINX_GPU_ADMONITION_USER_STARTUP") or None


_sphinx_gpu_admonition_user_startup = _sphinx_gpu_admonition_start()
del _sphinx_gpu_admonition_start
try:
    if _sphinx_gpu_admonition_user_startup:
        get_ipython().safe_execfile(  # noqa: F821 - IPython builtin
            _sphinx_gpu_admonition_user_startup, globals(), exit_ignore=True)
finally:
    del _sphinx_gpu_admonition_user_startup
