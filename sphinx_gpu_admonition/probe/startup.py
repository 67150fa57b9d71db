# sphinx-gpu-admonition: IPython runs this file (PYTHONSTARTUP) in the notebook's
# own namespace when the kernel starts. It loads the probe from its file and then
# runs the user's own PYTHONSTARTUP, if there was one. It must leave no names
# behind and never raise: the notebook has to run exactly as without it.
#
# The names below repeat probe/__init__.py (ENV_*) and protocol.py (KIND_*):
# this file cannot import either when the probe fails to load.
# tests/unit/probe/test_protocol.py checks that they agree.
def _sphinx_gpu_admonition_start(namespace, run_user_startup):
    import os
    import sys

    environ = os.environ
    probe_file = environ.pop("SPHINX_GPU_ADMONITION_PROBE", None)
    output = environ.pop("SPHINX_GPU_ADMONITION_OUTPUT", None)
    user_startup = environ.pop("SPHINX_GPU_ADMONITION_USER_STARTUP", None)
    explain = environ.pop("SPHINX_GPU_ADMONITION_EXPLAIN_RECOMPILATIONS", None) == "1"
    if probe_file is None:
        return
    # Kernels this notebook starts itself (nbclient, papermill, nbconvert
    # --execute in a cell) see the user's environment, not the capture's: they
    # must not write into this notebook's record.
    if user_startup:
        environ["PYTHONSTARTUP"] = user_startup
    else:
        environ.pop("PYTHONSTARTUP", None)

    def append_line(kind, message):
        if output:
            try:
                import json

                with open(output, "a", encoding="utf-8") as stream:
                    stream.write(json.dumps({"kind": kind, "message": message,
                                             "pid": os.getpid()}) + "\n")
            except Exception:  # noqa: S110 - never break the kernel
                pass

    shell = get_ipython()  # noqa: F821 - IPython builtin
    warn = None
    if output:
        try:
            import importlib.util

            name = "_sphinx_gpu_admonition_probe"
            spec = importlib.util.spec_from_file_location(name, probe_file)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            warn = module.install(shell, output, explain).warn
        except Exception as error:  # never break the kernel
            append_line("probe_error", f"{type(error).__name__}: {error}")
    if warn is None:
        def warn(message):
            append_line("warning", message)

    if user_startup:
        run_user_startup(shell, user_startup, namespace, warn)


def _sphinx_gpu_admonition_run_user_startup(shell, path, namespace, warn):
    """Run the user's PYTHONSTARTUP as IPython would, with its own ``__file__``.

    IPython would log its errors to the kernel's console, where nobody sees
    them in a book build: they also become a warning of the build.
    """
    import contextlib

    from IPython.utils.path import filefind

    try:  # where IPython itself looks for it
        full_path = filefind(path, [".", shell.ipython_dir])
    except OSError:
        warn(f"the PYTHONSTARTUP file {path} does not exist")
        return
    saved_file = namespace.get("__file__")
    namespace["__file__"] = path
    try:
        if full_path.endswith((".ipy", ".ipynb")):
            shell.safe_execfile_ipy(full_path, raise_exceptions=True)
        else:
            shell.safe_execfile(full_path, namespace, raise_exceptions=True)
    except (Exception, SystemExit) as error:
        with contextlib.suppress(Exception):
            shell.showtraceback()
        warn(f"the PYTHONSTARTUP file {path} raised {type(error).__name__}: {error} "
             "(the notebook ran without the rest of it)")
    finally:
        namespace["__file__"] = saved_file


try:
    _sphinx_gpu_admonition_start(globals(), _sphinx_gpu_admonition_run_user_startup)
except Exception:  # never break the kernel
    pass
finally:
    del _sphinx_gpu_admonition_start, _sphinx_gpu_admonition_run_user_startup
