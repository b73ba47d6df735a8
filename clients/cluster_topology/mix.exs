# Mix builds this OTP library (Erlang sources, no Elixir code, no dependencies), so an Elixir
# application can depend on it with a git dependency (clients/cluster_topology/README.md):
#   {:cluster_topology, git: "https://…/cluster-topology.git", branch: "main", sparse: "clients/cluster_topology"}
# The package and docs settings are for `mix hex.build` and `mix docs` (tools/beam/hex-build.sh);
# mix without Hex or ex_doc ignores them.
defmodule ClusterTopology.MixProject do
  use Mix.Project

  @source_url "https://github.com/netzlive/cluster-topology"

  def project do
    [
      app: :cluster_topology,
      version: "0.1.0",
      language: :erlang,
      erlc_paths: ["src"],
      erlc_options: [:debug_info],
      deps: [],
      description:
        "Cluster membership for Erlang and Elixir nodes on Kubernetes: connects the peers a " <>
          "ClusterTopology lists, from inside the VM (OTP only, no sidecar).",
      package: package(),
      docs: docs(),
      source_url: @source_url
    ]
  end

  def application do
    [extra_applications: [:kernel, :stdlib, :crypto, :public_key, :ssl]]
  end

  defp package do
    [
      licenses: ["Apache-2.0"],
      links: %{
        "Source" => "#{@source_url}/tree/main/clients/cluster_topology",
        "Status protocol" => "#{@source_url}/blob/main/docs/status-protocol.md"
      },
      # The library and how to build it; LICENSE is the repository's, copied in by hex-build.sh.
      files: ~w(src mix.exs rebar.config README.md LICENSE)
    ]
  end

  defp docs do
    [main: "readme", extras: ["README.md"], source_url: @source_url, source_url_pattern: "#{@source_url}/blob/main/clients/cluster_topology/%{path}#L%{line}"]
  end
end
