"""rnea_sim: a stand-in for a robot driver plus ros2_control, on MuJoCo (the only room that imports it)."""
