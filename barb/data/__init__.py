"""Minute bars on disk: the Parquet store, the synthetic sample, and vendor-file import.

``barb.data.store`` is the only module the engine needs; ``sample`` and ``importer`` (with
the vendor layouts in ``formats``) write the files it reads, and ``cli`` is the
`barb data …` command group.
"""
