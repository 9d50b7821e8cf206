import torch.nn as nn


class Net(nn.Linear):
    def __init__(self):
        super().__init__(4, 4)
