from rnea_ros.node.node import main

main()
