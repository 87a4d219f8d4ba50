"""CuPy's own kernel compiles as records that hold on another install of the same CuPy version.

A record holds the arguments of ``cupy.cuda.compiler._compile_module_with_cache`` for one of
CuPy's elementwise or reduction kernels, with this install's folders and header text as
placeholders: :func:`cupy_compile_record` makes one, :func:`cupy_compile_arguments` turns it
back into the arguments on the current install (:func:`cupy_install`). The replay's list of
them (``streams/data/replay_cupy_kernels_gpu.json``) is prebuilt by
:func:`hornet.core.cuda.prebuild_cupy_kernels` and seeded from shipped cubins by
:func:`hornet.core.cubins.seed_cupy_cache`.
"""
from __future__ import annotations


#: placeholder of a recorded CuPy compile for the text of CuPy's headers (the cache key's
#: extra source); ``{cupy_option_N}`` stands for the install's N-th compiler option
#: (:func:`cupy_install`)
CUPY_HEADER_SOURCE = "{cupy_header_source}"


def cupy_install() -> tuple:
    """(the compiler options CuPy gives each of its own kernels on this install: its bundled
    CCCL and header folders, the C++ standard, the CUDA header folder; the text of its
    headers, which its kernel cache key holds)."""
    from cupy._core import core
    return tuple(core.assemble_cupy_compiler_options(())), core._get_header_source()


def cupy_compile_record(source: str, options, extra_source, backend: str, jitify: bool,
                        install: tuple) -> dict:
    """A CuPy compile (the arguments of ``cupy.cuda.compiler._compile_module_with_cache``
    for one of CuPy's own kernels) as JSON-able data that holds on another install of the
    same CuPy version: the options of :func:`cupy_install` (folders of this install) and the
    headers' text become placeholders."""
    install_options, header_source = install
    return {"source": source,
            "options": ["{cupy_option_%d}" % install_options.index(o)
                        if o in install_options else o for o in options],
            "extra_source": CUPY_HEADER_SOURCE if extra_source == header_source
            else extra_source,
            "backend": backend, "jitify": bool(jitify)}


def cupy_compile_arguments(record: dict, install: tuple) -> tuple:
    """(source, options, extra_source, backend, jitify) of a :func:`cupy_compile_record` on
    the install :func:`cupy_install` describes."""
    install_options, header_source = install
    options = []
    for o in record["options"]:
        if o.startswith("{cupy_option_") and o.endswith("}"):
            o = install_options[int(o[len("{cupy_option_"):-1])]
        options.append(o)
    extra = record["extra_source"]
    return (record["source"], tuple(options),
            header_source if extra == CUPY_HEADER_SOURCE else extra,
            record["backend"], record["jitify"])
