import { stage } from '../tools/jsii/stage';
console.log(stage('/tmp/jstage').join('\n'));
