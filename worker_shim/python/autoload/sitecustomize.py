"""Loaded by Python at start-up when ddplaunch puts this folder on PYTHONPATH (--shim python):
runs the sitecustomize this one shadows, then ddplaunch_shim.install() when the launcher's
status socket is set. Anything that goes wrong here is ignored: the program must start anyway.
"""


def _run_shadowed_sitecustomize():
    # The first other sitecustomize on sys.path (e.g. Debian's apport hook, a venv's own)
    # is what Python would have run without us; run it the same way.
    import importlib.machinery
    import os
    import sys
    import types

    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    if spec.origin and os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    module = _module_for(spec, types)
    spec.loader.exec_module(module)


def _module_for(spec, types):
    # importlib.util.module_from_spec without importing importlib.util (a few ms at start-up).
    module = spec.loader.create_module(spec) if hasattr(spec.loader, "create_module") else None
    if module is None:
        module = types.ModuleType(spec.name)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = spec.origin
    return module


def _install_ddplaunch_shim():
    import importlib.machinery
    import os
    import sys
    import types

    if not os.environ.get("DDPLAUNCH_STATUS_SOCKET"):
        return
    # ddplaunch_shim.py lives one folder up; load it by path so sys.path stays as it was.
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "ddplaunch_shim.py")
    loader = importlib.machinery.SourceFileLoader("ddplaunch_shim", path)
    spec = importlib.machinery.ModuleSpec("ddplaunch_shim", loader, origin=path)
    module = _module_for(spec, types)
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
