"""Loaded by Python at start-up when ddplaunch puts this folder on PYTHONPATH (--shim python):
runs the sitecustomize this one shadows, then ddplaunch_shim.install() when the launcher's
status socket is set. Anything that goes wrong here is ignored: the program must start anyway.
"""


def _run_shadowed_sitecustomize():
    # The first other sitecustomize on sys.path (e.g. Debian's apport hook, a venv's own)
    # is what Python would have run without us; run it the same way.
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    if spec.origin and os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _install_ddplaunch_shim():
    import importlib.util
    import os
    import sys

    if not os.environ.get("DDPLAUNCH_STATUS_SOCKET"):
        return
    # ddplaunch_shim.py lives one folder up; load it by path so sys.path stays as it was.
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "ddplaunch_shim.py")
    spec = importlib.util.spec_from_file_location("ddplaunch_shim", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["ddplaunch_shim"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["ddplaunch_shim"]
        raise
    module.install()


try:
    _run_shadowed_sitecustomize()
except Exception:
    pass
try:
    _install_ddplaunch_shim()
except Exception:
    pass
