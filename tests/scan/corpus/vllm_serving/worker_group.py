"""An RL trainer's worker group: Ray actors built from a class handle the caller passes in, one
per placement-group bundle, each given the GPU share the caller chose at run time."""
import os  # expect: none

import ray  # expect: none
from ray.util.placement_group import placement_group  # expect: none
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # expect: none


def tokens_per_second(tokens, seconds, num_gpus):  # expect: none
    return tokens / (seconds * num_gpus)


class WorkerGroup:
    def __init__(self, make_actor, bundles, gpu_share):
        self.make_actor = make_actor
        self.bundles = bundles
        self.gpu_share = gpu_share
        self.workers = []

    def start(self, actor_cls, use_gpu):
        group = placement_group([{"CPU": 2}] * self.bundles, strategy="PACK")  # expect: none
        ray.get(group.ready())  # expect: none
        for index in range(self.bundles):
            worker = self.make_actor(placement_group=group, bundle_index=index, num_gpus=self.gpu_share)  # expect: VL009
            self.workers.append(worker)
        strategy = PlacementGroupSchedulingStrategy(placement_group=group, placement_group_bundle_index=0)  # expect: none
        probe = self.make_actor(placement_group=group, bundle_index=0, num_gpus=0)  # expect: none
        shadow = make_shadow(scheduling_strategy=strategy, use_gpu=use_gpu)  # expect: VL009
        idle = make_shadow(scheduling_strategy=strategy, use_gpu=False)  # expect: none
        share = actor_cls.options(num_gpus=self.gpu_share, scheduling_strategy=strategy).remote()  # expect: VL009
        return probe, shadow, idle, share

    def report(self, tokens, seconds):
        return tokens_per_second(tokens, seconds, num_gpus=len(self.workers))  # expect: none


class RolloutEngine:
    """Holds a vLLM engine inside a Ray actor; vLLM asks Ray for each worker's share itself."""

    def __init__(self, bundle_indices=None, **kwargs):
        self._engine_env(backend=kwargs.get("distributed_executor_backend"), bundle_indices=bundle_indices, num_gpus=kwargs.pop("num_gpus"))  # expect: none

    def _engine_env(self, backend, bundle_indices, num_gpus):
        if bundle_indices is not None:
            os.environ["VLLM_RAY_PER_WORKER_GPUS"] = str(num_gpus)  # expect: none


def engine_kwargs(colocate):
    return {"model": "org/policy", "num_gpus": 0.2 if colocate else 1}  # expect: none


def make_shadow(**options):
    return options
