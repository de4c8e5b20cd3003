"""The main job (``rnea_demo``) and the bundled example robot (``example_robot``, no ROS)."""
