"""What both ROS nodes (``node``, ``simulation``) and the demo share of ROS.

``subscription`` (a topic served by its own thread, outside the executor), ``ros_parameters``
(declarations with descriptors, from a ``parameter_spec``), ``trajectory_cdr`` (a JointTrajectory
read from and written to its serialized bytes with numpy; imports no ROS itself).
"""
