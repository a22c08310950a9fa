# Completes a command line in a real interactive zsh (on a pseudo-terminal, with compinit), and
# prints the candidates its completion functions offer, one line per compadd call.
# usage: zsh zsh_complete.zsh COMPLETION_SCRIPT "words typed so far"
zmodload zsh/zpty
zpty -b shell zsh -f -i
zpty -w shell "PS1=''; PS2=''"
zpty -w shell "autoload -Uz compinit && compinit -u -D"
zpty -w shell "source ${(q)1}"
# Every candidate a completion function adds is also printed, marked; calls that only collect
# or describe matches (-O, -A, -D) pass through untouched. Markers are split in the commands
# ("@@MA""TCH") so the terminal's echo of a command never reads as its output.
zpty -w shell 'compadd() { if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -O hits "$@"; (( $#hits )) && print -r -- "@@MA""TCH ${(j: :)hits}" > /dev/tty; builtin compadd "$@"; }'
zpty -w shell 'zstyle ":completion:*" menu no; print -r -- @@RE""ADY'
local line
while zpty -r shell line; do [[ $line == *@@READY* ]] && break; done
zpty -w -n shell "$2"$'\t'
sleep 0.5
zpty -w -n shell $'\C-u'
zpty -w shell 'print -r -- @@DO""NE'
while zpty -r shell line; do
    [[ $line == *@@MATCH* ]] && print -r -- "${${line#*@@MATCH }%$'\r'}"
    [[ $line == *'(eval)'* || $line == *'_arguments'*rror* ]] && print -r -- "@@ERROR ${line%$'\r'}"
    [[ $line == @@DONE* ]] && break
done
zpty -d shell
