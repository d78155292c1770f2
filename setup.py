"""Install the `agents` package: batched PPO on TensorFlow 2."""

import pathlib

import setuptools

setuptools.setup(
    # The import name stays `agents`; the distribution's name does not clash with the `agents`
    # distributions of other projects on package indexes.
    name="batch-ppo-tf2",
    version="0.1.0",
    # The license of the original TensorFlow Agents design, as an SPDX expression (setuptools has
    # deprecated License classifiers in its favour).
    license="Apache-2.0",
    license_files=["LICENSE", "NOTICE"],
    author="The agents authors",
    description="Batched, in-graph PPO for TensorFlow 2 and gymnasium.",
    long_description=pathlib.Path("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    packages=setuptools.find_packages(include=["agents", "agents.*"]),
    python_requires=">=3.10",
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Science/Research",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    install_requires=[
        # tfp 0.25 is the release that imports and runs with TF 2.16-2.21; it needs tf-keras.
        "tensorflow>=2.16,<2.22",
        "tensorflow-probability>=0.25,<0.26",
        "tf-keras>=2.16,<2.22",
        "tensorboard>=2.16",  # tf.summary writes through it; TF 2.21 no longer depends on it.
        "gymnasium>=1.0,<2",
        "numpy>=1.24",
        "mpi4py>=3.1",
        "mpich",  # MPI runtime wheel: `mpirun` works after pip install alone.
        "pyyaml>=6",
        "cloudpickle>=2",
        "tqdm>=4.60",
        "matplotlib>=3.7",
    ],
    extras_require={
        # The tests render videos and run the pixel configs, so they need the packages of the
        # video, minigrid and atari extras.
        "test": [
            "pytest>=7",
            # Two workers: the suite's tests wait on TensorFlow's start-up and tracing, which
            # are mostly single-threaded, so two cores run it in well under the time of one.
            "pytest-xdist>=3",
            "ruff>=0.5,<0.18",
            "imageio>=2.30",
            "imageio-ffmpeg>=0.4",
            "gymnasium[classic-control]>=1.0,<2",
            "minigrid>=2.3",
            "ale-py>=0.9",
            "opencv-python-headless>=4",
            # The envpool backend's tests (EnvPool has wheels for Python 3.11 and later).
            "envpool>=1.2; python_version >= '3.11'",
            # The docs build in strict mode as a test (tests/test_docs.py).
            "mkdocs-material>=9.5,<10",
            "mkdocstrings[python]>=1.0,<2",
            "optuna>=3.0",  # The tuner's tests.
            "wandb>=0.19",  # --track's tests (offline).
            # The ONNX export's parity tests run in CI, which installs this extra alone; LiteRT
            # runs the TFLite tests (tf.lite.Interpreter is deprecated in its favour).
            "tf2onnx>=1.17",
            "onnx>=1.23",
            "onnxruntime>=1.31",
            "ai-edge-litert>=2.3",
        ],
        # The documentation site: `mkdocs serve`, `mkdocs build --strict` (mkdocs.yml).
        "docs": ["mkdocs-material>=9.5,<10", "mkdocstrings[python]>=1.0,<2"],
        "mujoco": ["gymnasium[mujoco]>=1.0,<2"],
        # AtariPreprocessing needs cv2; the headless build avoids GUI libraries on servers.
        "atari": ["ale-py>=0.9", "opencv-python-headless>=4"],
        "minigrid": ["minigrid>=2.3"],
        # env_backend=envpool: classic control, MuJoCo and Atari stepped in C++ threads.
        "envpool": ["envpool>=1.2; python_version >= '3.11'"],
        # python -m agents.scripts.tune: Optuna, the standard for TPE sampling and pruning.
        "tune": ["optuna>=3.0"],
        # agents.export(run_dir, format="onnx"): tf2onnx converts (1.16 pins protobuf 3.20, which
        # TF 2.16+ cannot import with); onnxruntime runs the model with numpy alone. The
        # releases tested: tf2onnx 1.17.0, onnx 1.23.2, onnxruntime 1.31.1.
        "onnx": ["tf2onnx>=1.17", "onnx>=1.23", "onnxruntime>=1.31"],
        # TFLite models run by LiteRT, which replaces the deprecated tf.lite.Interpreter.
        "litert": ["ai-edge-litert>=2.3"],
        # train --track: Weights & Biases, the tracker most RL users reach for (CleanRL's).
        "track": ["wandb>=0.19"],
        # pygame (classic-control) renders Pendulum and CartPole frames; imageio writes mp4.
        "video": ["imageio>=2.30", "imageio-ffmpeg>=0.4", "gymnasium[classic-control]>=1.0,<2"],
    },
)
