"""rnea_node: everything that touches rclpy and ROS messages lives in this room.

Plain-Python logic (tested without ROS): ``settings``, ``state``, ``torques``, ``core``,
``loader``, ``diagnostics``. ROS wiring: ``parameters``, ``messages``, ``subscription``,
``node`` (``RneaNode`` and ``main``).
"""
