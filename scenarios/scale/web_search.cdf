# Flow sizes of the web-search workload (DCTCP, SIGCOMM 2010), in the form the
# HPCC and DCQCN simulators use: size in bytes, cumulative percentage.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
