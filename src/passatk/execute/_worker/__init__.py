"""The sandboxed side of passatk's executor: standard library only.

Everything in this package runs inside the sandbox, started as a plain
``python -I -S -B`` long before any sample is seen.  It imports nothing from
``passatk`` and nothing outside the standard library, so that it loads in a
bare interpreter with a read-only view of ``/usr`` only.
"""
