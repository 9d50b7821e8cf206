#!/bin/bash
# Build the image, then train inside it on every GPU of the host.
IMAGE=trainer:latest  # expect: none
docker build -t $IMAGE -f Dockerfile .  # expect: none
docker run --rm --gpus all -v "$PWD":/workspace $IMAGE python train.py  # expect: NV002
docker run --rm --gpus '"device=0,1"' $IMAGE python eval.py  # expect: NV002
docker run --rm --gpus=2 --shm-size 16g $IMAGE python train.py  # expect: NV002
docker run -it \
    --gpus all \  # expect: NV002
    --ipc=host $IMAGE bash  # expect: none
nvidia-docker run --rm $IMAGE python train.py  # expect: NV002
docker run --runtime=nvidia --rm $IMAGE nvidia-smi  # expect: NV002, NV001
docker run --runtime runc --rm $IMAGE python eval.py  # expect: none
python train.py --gpus 2 --batch-size 64  # expect: none
torchrun --nproc_per_node 8 train.py --num-gpus 8  # expect: none
echo "use --gpus all to see every device"  # expect: none
docker run --rm -v "$PWD":/w $IMAGE python train.py --gpus 2  # expect: none
docker run --rm $IMAGE bash -c "python train.py --gpus=4"  # expect: none
sudo apt-get install -y nvidia-container-toolkit  # expect: NV002
curl -s -L https://nvidia.github.io/nvidia-docker/gpgkey | sudo apt-key add -  # expect: none
