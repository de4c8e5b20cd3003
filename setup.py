from glob import glob

from setuptools import find_packages, setup

package_name = "rnea_ros"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    package_data={package_name: ["robots/*.urdf"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*.launch.py")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/urdf", glob("rnea_ros/robots/*.urdf")),
    ],
    install_requires=["setuptools", "numpy", "numba", "pyyaml", "matplotlib", "rosbags"],
    zip_safe=False,
    maintainer="rnea_ros maintainers",
    maintainer_email="rnea_ros@example.com",
    description="Inverse dynamics (Recursive Newton-Euler) for any URDF robot: a Python library and a ROS 2 node.",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "rnea_node = rnea_ros.node:main",
            "rnea_demo = rnea_ros.demo:main",
            "rnea_analyze = rnea_ros.analyze:entry_point",
        ],
    },
)
