# SPDX-License-Identifier: MIT
# The same five-panel chart as `sparkops report --svg`, drawn by gnuplot from
# the same CSV log (bench/bench_report.sh). Columns: docs/csv-log.md.
# gnuplot -e "log='run.csv'; out='run.svg'" bench/bench_report.gp
set terminal svg size 1200,920 dynamic
set output out
set datafile separator comma
set datafile missing ""
set key top left horizontal
set xdata time
set timefmt "%s"
set format x "%H:%M"
set multiplot layout 5,1
set ylabel "GiB"
plot log every ::1 using 2:(($6-$7)/2**30) with lines title "used", \
     ''  every ::1 using 2:($6/2**30) with lines dt 2 title "total", \
     ''  every ::1 using 2:($11/2**30) with lines title "budget"
set ylabel "C"
plot log every ::1 using 2:18 with lines title "GPU", '' every ::1 using 2:25 with lines title "SoC"
set ylabel "W"
plot log every ::1 using 2:19 with lines title "GPU", '' every ::1 using 2:26 with lines title "system", \
     ''  every ::1 using 2:27 with lines title "PL1", '' every ::1 using 2:28 with lines dt 2 title "PL1 cap"
set ylabel "MHz"
plot log every ::1 using 2:20 with lines title "SM clock"
set ylabel "it/s"
plot log every ::1 using 2:30 with lines title "throughput"
unset multiplot
