"""The CPU (Numba) backend of the batch pipeline: the kernels that :class:`hornet.Graph` calls.

Modules: :mod:`.ids` (id bounds), :mod:`.sort` (sort and deduplicate a batch), :mod:`.lists`
(search, move and read vertex lists), :mod:`.general` (find / keep / plan / merge or remove /
commit, the GPU's steps), :mod:`.fused` (the CPU's three-pass insert and delete), :mod:`.small`
(the small-batch kernels), :mod:`.workspace` (reused host buffers).
"""
from .fused import (EdgeFields, block_requests, changed_pairs, merge_insert, place_blocks,
                    plan_delete, plan_insert, remove_fused)
from .general import (canonical_entries, canonical_pairs, commit_segments, find_positions,
                      keep_entries, merge_lists, plan_segments, remove_lists, workspace)
from .ids import id_bounds
from .remove_first import move_down, remove_in_place
from .lists import gather_lists, list_violations, read_at, write_at
from .sort import sorted_unique_pairs

__all__ = ["EdgeFields", "block_requests", "canonical_entries", "canonical_pairs",
           "changed_pairs", "commit_segments", "find_positions", "gather_lists", "id_bounds",
           "keep_entries", "list_violations", "merge_insert", "merge_lists", "move_down",
           "place_blocks",
           "plan_delete", "plan_insert", "plan_segments", "read_at", "remove_fused",
           "remove_in_place",
           "remove_lists", "sorted_unique_pairs", "workspace", "write_at"]
