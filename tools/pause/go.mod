module cluster-topology.invalid/tools/pause

go 1.26.0
