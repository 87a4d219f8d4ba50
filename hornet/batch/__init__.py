"""The batch pipeline: validation, sorting, duplicate removal, merge into sorted lists."""
