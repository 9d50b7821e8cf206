from tunekit.options import OptionParser
