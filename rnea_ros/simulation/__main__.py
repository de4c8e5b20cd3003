from rnea_ros.simulation.sim_node import main

main()
