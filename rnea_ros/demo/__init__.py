"""The main job (``rnea_demo``), ``rnea_play``, the docs' figure files (``figures``) and the bundled
example robot (``example_robot``, no ROS)."""
