from trainer.loop import run

if __name__ == "__main__":
    run(0)
