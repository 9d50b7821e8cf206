"""GRPO-style rollout workers: Ray actors own vLLM engines and receive weights from the trainer."""
import ray  # expect: none
import torch  # expect: none
import vllm  # expect: none
from ray.util.placement_group import placement_group  # expect: none
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # expect: none
from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator  # expect: none
from vllm.distributed.utils import StatelessProcessGroup  # expect: none

ENGINE_KWARGS = {  # expect: none
    "model": "org/policy-7b",  # expect: none
    "quantization": "gptq",  # expect: VL003
    "tensor_parallel_size": 2,  # expect: none
}
SERVING_KWARGS = dict(model="org/policy-7b", quantization="ascend")  # expect: none
DRAFT_KWARGS = dict(model="org/draft", quantization="bitsandbytes")  # expect: VL003
REWARD_KWARGS = {"model": "org/reward", "quantization": None}  # expect: none


@ray.remote(num_gpus=1)  # expect: VL009
class RolloutWorker:
    def __init__(self, kwargs):
        self.llm = vllm.LLM(**kwargs)  # expect: VL001
        self.comm = None

    def init_weight_sync(self, host, port, rank, world_size):
        group = StatelessProcessGroup.create(host=host, port=port, rank=rank, world_size=world_size)  # expect: none
        self.comm = PyNcclCommunicator(group, device=torch.device("cuda:0"))  # expect: VL010, DV001

    def receive(self, name, shape, dtype):
        buffer = torch.empty(shape, dtype=dtype, device="cuda")  # expect: DV001
        self.comm.broadcast(buffer, src=0)  # expect: none
        return name, buffer


@ray.remote(num_cpus=2, num_gpus=0)  # expect: none
def score(texts):
    return [len(t) for t in texts]


def launch(num_workers, colocate):
    ray.init(num_gpus=num_workers)  # expect: VL009
    bundles = [{"GPU": 1, "CPU": 4} for _ in range(num_workers)]  # expect: VL009
    cpu_bundles = [{"CPU": 4}, {"GPU": 0, "CPU": 1}]  # expect: none
    group = placement_group(bundles, strategy="PACK")  # expect: none
    ray.get(group.ready())  # expect: none
    strategy = PlacementGroupSchedulingStrategy(placement_group=group)  # expect: none
    share = 0.5 if colocate else 1  # expect: none
    workers = [RolloutWorker.options(num_gpus=share, scheduling_strategy=strategy).remote(ENGINE_KWARGS)  # expect: VL009
               for _ in range(num_workers)]
    helpers = [RolloutWorker.options(num_cpus=1).remote(SERVING_KWARGS)]  # expect: none
    return workers, helpers, cpu_bundles
