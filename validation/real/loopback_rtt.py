"""Loopback TCP round trip between two pinned processes (validation/real/machine.toml's [network]).

    taskset -c 1 python3 loopback_rtt.py s &   # echo server on the server's core
    taskset -c 0 python3 loopback_rtt.py c     # 20,000 pings from the client's core
"""
import socket, sys, time, os
if sys.argv[1]=='s':
    s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind(('127.0.0.1',19999)); s.listen(1)
    c,_=s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1)
    while True:
        d=c.recv(64)
        if not d: break
        c.sendall(d)
else:
    c=socket.create_connection(('127.0.0.1',19999)); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,1)
    r=[]
    for i in range(20000):
        t=time.perf_counter_ns(); c.sendall(b'x'*32); c.recv(64); r.append(time.perf_counter_ns()-t)
    r.sort(); print("rtt us p50 %.1f p90 %.1f p99 %.1f"%(r[len(r)//2]/1e3, r[int(len(r)*.9)]/1e3, r[int(len(r)*.99)]/1e3))
