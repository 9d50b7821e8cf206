#!/bin/sh
python build_ext.py
python setup.py develop
python fastops/bench.py
