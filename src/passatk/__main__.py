"""``python -m passatk``: the ``passatk`` command."""

from passatk._entry import main

if __name__ == "__main__":
    main()
