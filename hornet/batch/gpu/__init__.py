"""The GPU (CuPy + CUDA C++) backend of the batch pipeline: the kernels that
:class:`hornet.Graph` calls.

Modules: :mod:`.kernels` (the general pipeline: sort, find, keep, plan, merge or remove,
commit; CUDA source ``kernels.cu``; the gather of whole lists is :mod:`hornet.core.gather`), :mod:`.small` (the small-batch path's two kernels; CUDA
source ``small_batch.cu``), :mod:`.plan` (a batch planned on the device with one read-back,
for :mod:`hornet.batch.planned`; CUDA source ``plan.cu``), :mod:`.medium` (the medium-batch
path: the plan's first kernels into the small path's workspace, rewritten by warps and blocks;
CUDA source ``medium_batch.cu``, which shares ``small_rewrite.cuh`` with ``small_batch.cu``). Each ``.cu`` file is compiled once
per process, on first use.
"""
from ...core.gather import gather_lists
from .kernels import (canonical_entries, canonical_pairs, commit_segments, find_positions,
                      id_bounds, keep_entries, list_violations, merge_lists, plan_segments,
                      read_at, remove_lists, sorted_unique_pairs, workspace, write_at)

__all__ = ["canonical_entries", "canonical_pairs", "commit_segments", "find_positions",
           "gather_lists", "id_bounds", "keep_entries", "list_violations", "merge_lists",
           "plan_segments", "read_at", "remove_lists", "sorted_unique_pairs", "workspace",
           "write_at"]
