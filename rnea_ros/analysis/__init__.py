"""rnea_analyze: recordings (rosbag2, CSV) checked against the model, offline. No rclpy.

``recording`` reads chunks, ``differentiate`` estimates q̇ and q̈, ``pipeline`` computes
and fits, ``fast_csv`` and ``plot`` write the results, ``cli`` is the command line.
"""
