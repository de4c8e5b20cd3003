"""How joints move in time, without ROS and without the dynamics.

``trajectory`` (a JointTrajectory's content as arrays, the joint_trajectory_controller's spline),
``multisine`` (the multi-sine trajectories the demo plays and the excitation design optimises).
"""
