from glob import glob

from setuptools import find_packages, setup

package_name = "rnea_ros"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={f"{package_name}.demo": ["robots/*.urdf"], f"{package_name}.node": ["fastdds_start.xml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*.launch.py")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/urdf", glob("rnea_ros/demo/robots/*.urdf")),
    ],
    # The dynamics core: numpy, numba, lxml, urdfdom-py. rnea_analyze: rosbags, matplotlib; the
    # launch file and rnea_analyze --urdf: xacro; the node: rclpy and message packages (from ROS,
    # not PyPI names, so listed in package.xml only).
    install_requires=[
        "setuptools",
        "numpy>=1.26",
        "numba>=0.60",
        "lxml>=5",
        "urdfdom-py",
        "pyyaml",
        "matplotlib>=3.8",
        "rosbags>=0.10",
        "xacro",
        "quadprog",  # rnea_node contact_distribution qp
    ],
    # rnea_sim (and so the closed-loop demo) needs MuJoCo; the core and the node never import it.
    extras_require={
        "sim": ["mujoco>=3.3"],
        "parquet": ["pyarrow>=14"],
        "fleet": ["dask[distributed]>=2024.1"],
        "test": [
            "pytest>=8",
            "hypothesis>=6.100",
            "pin",
            "example-robot-data",
            "mujoco>=3.3",
            "pyarrow>=14",
            "dask[distributed]>=2024.1",
        ],
    },
    zip_safe=False,
    maintainer="rnea_ros maintainers",
    maintainer_email="rnea_ros@example.com",
    description="Inverse dynamics (Recursive Newton-Euler) for any URDF robot: a Python library and a ROS 2 node.",
    license="BSD-3-Clause",
    entry_points={
        "console_scripts": [
            "rnea_node = rnea_ros.node.__main__:run",
            "rnea_demo = rnea_ros.demo.demo:main",
            "rnea_analyze = rnea_ros.analysis.cli:entry_point",
            "rnea_sim = rnea_ros.simulation.sim_node:main",
            "rnea_gains = rnea_ros.analysis.gains:entry_point",
            "rnea_play = rnea_ros.demo.player:main",
            "rnea_excite = rnea_ros.analysis.excitation:entry_point",
            "rnea_compile = rnea_ros.compile:main",
            "rnea_record = rnea_ros.demo.recorder:main",
        ],
    },
)
