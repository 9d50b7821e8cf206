from setuptools import setup

setup(
    name="fastops",
    packages=["fastops"],
    entry_points={"console_scripts": ["fastops-bench = fastops.bench:main"]},
)

if __name__ == "__main__":
    print("use pip install .")
