from rnea_ros.demo.demo import main

main()
