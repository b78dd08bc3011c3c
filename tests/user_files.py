"""What the fault-matrix tests compare before and after a refusal: the
user's files as they were (bytes and modification times)."""
import hashlib
import os
import os.path as osp


def snapshot(*paths):
    """{path: (size, mtime_ns, sha1)} of every file at or under ``paths``;
    a path that does not exist maps to None."""
    out = {}
    for path in map(str, paths):
        if osp.isdir(path):
            for folder, _, files in os.walk(path):
                for name in files:
                    out.update(snapshot(osp.join(folder, name)))
        elif osp.exists(path):
            st = os.stat(path)
            with open(path, 'rb') as f:
                digest = hashlib.sha1(f.read()).hexdigest()
            out[path] = (st.st_size, st.st_mtime_ns, digest)
        else:
            out[path] = None
    return out
