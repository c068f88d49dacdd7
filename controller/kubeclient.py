"""kubernetes_asyncio's transport, without the generated API and model modules.

The `kubernetes_asyncio.client` package's `__init__` imports every generated API and model
class: over 800 modules and some 30 MiB of resident memory, a sixth of the scheduler's peak at
1,000 nodes. topobridge uses only the transport: `ApiClient.call_api`, `Configuration`,
`ApiException` and the kubeconfig and in-cluster loaders. So `kubernetes_asyncio.client` and
`.client.models` are put in `sys.modules` created but not run, with their `__path__` set so
that submodules import as usual. Such a package's own `__init__` runs on the first attribute
read that is neither one of the transport's names below nor a submodule:
`from kubernetes_asyncio.client import CoreV1Api` still works (tests and dev tools do it); it
just pays the import then.

The top package `kubernetes_asyncio` itself is run right away, as an import would run it:
its subpackages (`dynamic`, `utils`, ...) import one another in a circle that works only in
the order its `__init__` imports them.

If anything imported kubernetes_asyncio before this module, it is left as it is. Every import
of kubernetes_asyncio in the controller goes through here, so this runs first.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

TOP = "kubernetes_asyncio"
# Package -> {name: the submodule that defines it}: what the deferred packages serve themselves.
TRANSPORT_NAMES: dict[str, dict[str, str]] = {
    "kubernetes_asyncio.client": {
        "ApiClient": "kubernetes_asyncio.client.api_client",
        "Configuration": "kubernetes_asyncio.client.configuration",
        "ApiException": "kubernetes_asyncio.client.exceptions",
    },
    "kubernetes_asyncio.client.models": {},
}

_lock = threading.RLock()


def _defer_package_inits() -> None:
    """Install `TRANSPORT_NAMES`' packages (parents first) created but not run, then run the
    top package; see the module docstring."""
    with _lock:
        if TOP in sys.modules:
            return
        top_module = _created(TOP, None)
        installed = [TOP]
        try:
            for name, names in TRANSPORT_NAMES.items():
                parent, _, child = name.rpartition(".")
                module = _created(name, sys.modules[parent].__path__)
                module.__getattr__ = _on_first_use(module, names)  # type: ignore[method-assign]  # PEP 562
                installed.append(name)
                setattr(sys.modules[parent], child, module)
            assert top_module.__spec__ is not None and top_module.__spec__.loader is not None
            top_module.__spec__.loader.exec_module(top_module)
        except BaseException:
            for name in installed:  # as a failed import would: the packages leave sys.modules
                sys.modules.pop(name, None)
            raise


def _created(name: str, search_path: Sequence[str] | None) -> ModuleType:
    """The package `name`, in `sys.modules`, its `__init__` not run."""
    spec = importlib.machinery.PathFinder.find_spec(name, search_path)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not an installed package", name=name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    return module


def _on_first_use(module: ModuleType, names: dict[str, str]) -> Callable[[str], Any]:
    def __getattr__(attr: str) -> Any:
        where = names.get(attr)
        if where is not None:
            value = getattr(importlib.import_module(where), attr)
            setattr(module, attr, value)
            return value
        spec = module.__spec__
        assert spec is not None and spec.loader is not None
        # A submodule: the import system imports it once this says the attribute is missing.
        if importlib.machinery.PathFinder.find_spec(f"{module.__name__}.{attr}", module.__path__):
            raise AttributeError(attr)
        with _lock:
            if module.__dict__.get("__getattr__") is __getattr__:
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}") from None

    return __getattr__


_defer_package_inits()

from kubernetes_asyncio import config  # noqa: E402  (after the deferral above)
from kubernetes_asyncio.client.api_client import ApiClient  # noqa: E402
from kubernetes_asyncio.client.configuration import Configuration  # noqa: E402
from kubernetes_asyncio.client.exceptions import ApiException  # noqa: E402

__all__ = ["ApiClient", "ApiException", "Configuration", "config"]
