from imgtool.cli import train
