# zsh -f complete.zsh DIR LINE, run in a scratch folder: the matches zsh's completion system offers
# for LINE (the cursor at its end) with the completion functions in DIR first on fpath, one a line.
# An interactive `zsh -f` on a pseudo-terminal (zsh/zpty) types LINE and TAB; compadd is wrapped to
# print what it adds.
zmodload zsh/zpty || exit 2
dir=$1 line=$2
zpty z zsh -f -i
# compinit: its dump file in the current folder and never written (-D after -d: a later -d turns
# dumping back on, and compdump replaces its file with `mv`).
zpty -w z "PROMPT= RPROMPT=; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)PWD}/.zcompdump -D"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a h; builtin compadd -A h "$@"; builtin compadd "$@"; local m; for m in $h; do print -r -- "${:-MA}TCH:$m"; done }'
zpty -w z 'tab() { zle complete-word; print -r -- "${:-TAB}DONE"; }; zle -N tab; bindkey "^I" tab'
zpty -w -n z "$line"$'\t'
out=
for i in {1..400}; do
  if zpty -r -t z chunk; then out+=$chunk; [[ $out == *TABDONE* ]] && break; else sleep 0.05; fi
done
zpty -w -n z $'\C-U'
zpty -d z
[[ $out == *TABDONE* ]] || { print -u2 "complete.zsh: no answer from zsh's completion in 20 s"; exit 3; }
print -r -- "${out//$'\r'/}" | sed -n 's/^.*MATCH:\(.*\)$/\1/p'
