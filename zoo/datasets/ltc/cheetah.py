"""Half-Cheetah next-step prediction (LTC paper Table 6; [LTC] ``cheetah.py``;
docs/sources.md#ltc-cheetah).

31 MuJoCo rollouts of 1000 steps × 17 observations, shipped in the authors' repository. In the
sorted file list, traces 0–4 are validation, 5–14 test, 15–24 training (25–30 are unused). Each
trace (as float32) is cut into windows of 32 with stride 10, starts ``range(0, 1000 − 33, 10)``
(97 per trace); the target of step t is the observation at t + 1 (teacher forcing), MSE.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.readers import reading
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset

SOURCE = ("https://raw.githubusercontent.com/raminmh/liquid_time_constant_networks/"
          "4a8a4fa22a91c4067b6944a264819ff30a4aae9d/experiments_with_ltcs/data/cheetah/")
SHA256 = {
    "trace_0000.npy": "c043e141c6dd99e9b41ac7a9d4bc741b0991cff6a769954517e9c204ce3c7ccc",
    "trace_0001.npy": "f231fe66284b535c745f9f44a595aac2f740b988171d3db3201597e821c6c5d3",
    "trace_0002.npy": "7ff8a0c8974247187717417f6a163023b739c3a22a374894becff1723ce67f68",
    "trace_0003.npy": "28109a8f9eae1ec0246aca4f5bfa10ebf21e9f86e62e448b9f8b66f345091680",
    "trace_0004.npy": "b478f21d00868db66d6aef8a14ed69f6214120870cc1491dec85a3f74aeb46eb",
    "trace_0005.npy": "45e6288f3d5ba610b98aea300c117b032c6585144eb55e7f7fb67178d71eb4d6",
    "trace_0006.npy": "ab93f0d3b9e0c5f1a7886a089e76d5ff99f955ad0671f23d98351d05fecf4913",
    "trace_0007.npy": "e29bc1ffee113f760b3efd33831dea0485626e2deddc1ee7a81baf30344aeaaa",
    "trace_0008.npy": "c7028a2301720e65a31f608d362c03f811aca977ebb0f3ee0d6985bc4f6f1c2c",
    "trace_0009.npy": "937afdd66e3c6487a48b1d04c2f2120ba24be563296f5bfaa8bef741083c7b7c",
    "trace_0010.npy": "625dbb7c7f8451816799b3dcd47d20ace4a82019e52d467e7a985422551be890",
    "trace_0011.npy": "d230f2c43a84462fda2f5af28480f7a2b7945f032731587fca896229dc3b02dc",
    "trace_0012.npy": "feef3754c2c547fdd7cfd697323eea81b212c854bfd3029f04048e277b9399c1",
    "trace_0013.npy": "53e9e0d128f9e21def2ee015bc41c40184b22df5928d05f5a978687d3696c76d",
    "trace_0014.npy": "f022f778ad332f8c6986709ca27dd18823130bb3a7f71f646c8a5ccdc483acda",
    "trace_0015.npy": "bcb9e34a17317e31f22ef71d82aa180c282ab08b81a21bfcfefb827dabbd8ee8",
    "trace_0016.npy": "7d22f86d205728c7c106d43c97cfc4038621700bc88bf4081855e1c01b2c9229",
    "trace_0017.npy": "403d52608b364089a4c8d48cc89758eacdb89b572ef6ca0c0829a4cf40fb063c",
    "trace_0018.npy": "6d8322ec8351fb68ec11e4173ed23c4c247c23faa4e66be6cfa3dbeec0717e5a",
    "trace_0019.npy": "7354afb2041a1af8117f0c2dca36f57cd489d6bb77f939bc81d134409836b358",
    "trace_0020.npy": "9d22d9138c0fd51eaa8271e484ce0a5b3c3f8ef592f5c91cf55933af4091e4d2",
    "trace_0021.npy": "363b31828ed262556cb987dc7ad470c8c039e6ca492a92e9139d4ab5422924d1",
    "trace_0022.npy": "27f624129fdeca0c4fa40499cb48ba5321d2bfd9b4effd0de189124de9fb7a5f",
    "trace_0023.npy": "680f5675eed8d8cc62ca9fcba2fe0f23a2acbad51019b7bb0d3954dc6e607e9b",
    "trace_0024.npy": "ae98a98829f61ec23260818743e7f659601641c459a4a797a8df86e235ec4b85",
    "trace_0025.npy": "a2488d0aaf847990f1a90f302803891b51dc5ba40e28e94f044ca11e428292ae",
    "trace_0026.npy": "bc9acb935a821810ecef4050b6d1e9e7bdb992601b70393492efa9c471e26c0c",
    "trace_0027.npy": "573e85ef1bda7c22583f362de712e62a33e8f9be319bf1bf4d754d822edfe701",
    "trace_0028.npy": "a20bdc1de0904a0522128db016d592f2ef95559ae9b6623e1496cb590bd552e0",
    "trace_0029.npy": "49f13631038f37b52e1fd929ecf430d02a6f140a32b43bec764855db41780c78",
    "trace_0030.npy": "f5b868f5886f5014fc2f4060fcce9694c0e30b03fc9e402ae6da3805da9d6a65",
}
RECORD = DatasetRecord(
    name="cheetah",
    title="Half-Cheetah rollouts (LTC paper, Table 6)",
    files=tuple(RemoteFile(name, [SOURCE + name], sha, 136128,
                           "sha256 of the file in the authors' repository")
                for name, sha in SHA256.items()),
    licence="Apache-2.0 (the LTC repository)",
    citation="Hasani, Lechner, Amini, Rus, Grosu: Liquid Time-constant Networks, AAAI 2021",
    homepage="https://github.com/raminmh/liquid_time_constant_networks",
    mirror_subdir="ltc/cheetah",
)
LENGTH, STRIDE = 32, 10
VAL, TEST, TRAIN = slice(0, 5), slice(5, 15), slice(15, 25)


class CheetahConfig(LTCDataset):
    """Half-Cheetah: predict the next 17-d observation at every step (LTC Table 6)."""

    kind: Literal["cheetah"] = "cheetah"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("regression", 17, per_step=True)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        files = sorted(paths)
        out = {}
        for split, part in (("train", TRAIN), ("val", VAL), ("test", TEST)):
            xs, ys = [], []
            for name in files[part]:
                with reading(self.kind, paths[name]):
                    trace = np.load(paths[name]).astype(np.float32)
                    if trace.ndim != 2 or trace.shape[1] != 17:
                        raise ValueError(f"expected (steps, 17) observations, got {trace.shape}")
                starts = ltc_starts(len(trace) - 1, LENGTH, STRIDE)
                xs.append(cut(trace, starts, LENGTH))
                ys.append(cut(trace, starts, LENGTH, offset=1))
            out[f"{split}_x"], out[f"{split}_y"] = np.concatenate(xs), np.concatenate(ys)
        return out
