"""An RL trainer checks the Ray cluster before it places its actors: it counts the accelerators
Ray reports, compares them with what the role mapping needs, and sizes the rollout pool from
the same tables."""
import ray  # expect: none


def required_gpus(pools):  # expect: none
    return sum(sum(nodes) for nodes in pools.values())


def check_cluster(pools):
    free = ray.available_resources().get("GPU", 0)  # expect: VL011
    needed = required_gpus(pools)
    if free < needed:
        raise ValueError(f"only {free} GPUs free, {needed} needed")  # expect: none
    return free


def cluster_summary():
    table = ray.cluster_resources()
    total = ray.cluster_resources()["GPU"]  # expect: VL011
    cpus = ray.cluster_resources().get("CPU", 0)  # expect: none
    npus = ray.available_resources().get("NPU", 0)  # expect: none
    memory = table.get("memory", 0)  # expect: none
    return total, cpus, npus, memory


def rollout_pool_size(per_engine):
    gpus = int(ray.available_resources().get("GPU"))  # expect: VL011
    return max(1, gpus // per_engine)


def nodes_with_gpus():
    ready = [n for n in ray.nodes() if n["Alive"]]  # expect: none
    return ready, ray.available_resources()["GPU"] > 0  # expect: VL011


def wait_for_gpus(minimum):
    while ray.cluster_resources().get("GPU", 0.0) < minimum:  # expect: VL011
        ray.get([])


def bundles_for(workers, per_worker, cpus):
    gpu_bundles = [{"GPU": per_worker, "CPU": cpus} for _ in range(workers)]  # expect: VL009
    cpu_bundles = [{"GPU": 0, "CPU": cpus}] * workers  # expect: none
    return gpu_bundles, cpu_bundles
