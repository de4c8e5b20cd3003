"""Soak test of rnea_node (see ``rnea_ros.testing.soak``, which the test suite also runs for 20 s).

python benchmarks/soak.py [--seconds 600] [--rate 2000] [--swap-period 3]
"""

from rnea_ros.testing.soak import main

if __name__ == "__main__":
    main()
