"""The ground floor: helpers that every layer of hornet uses, and that import nothing of hornet.

Importing the package registers the split kernels' parfor launchers with
:mod:`~hornet.core.jit` (:mod:`~hornet.core.launchers`).

- :mod:`~hornet.core.jit`: compiling CPU kernels (split kernels, unchecked indices);
- :mod:`~hornet.core.threads`: the threads that run the parts of split kernels;
- :mod:`~hornet.core.pointers`: raw addresses as arrays inside Numba kernels, prefetches;
- :mod:`~hornet.core.search`: binary searches in sorted arrays and address directories;
- :mod:`~hornet.core.atomics`: atomic add / compare-and-swap inside Numba kernels;
- :mod:`~hornet.core.chunking`: balanced chunks of parallel CPU work;
- :mod:`~hornet.core.cuda`: compiling ``.cu`` files once per process and launching kernels
  (CuPy), with ``segmented.cuh``, the device helpers shared by every CUDA source;
- :mod:`~hornet.core.gather`: a pointer view's lists gathered into one device array (CuPy);
- :mod:`~hornet.core.device`: which devices this process can use.
"""

from . import jit, launchers  # noqa: E402

jit.launched_parts = launchers.run       # split calls reach their launchers through jit
