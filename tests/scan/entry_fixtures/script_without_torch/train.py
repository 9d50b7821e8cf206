from models.net import Net

if __name__ == "__main__":
    Net().cuda()
